"use client";

import { useEffect, useState } from "react";
import { MeView } from "@/server/protocol";
import { api } from "@/components/transport/client";

/** Who this page is signed in as (null until known, or in single-token mode's `person: null`). */
export function useMe(): MeView | null {
  const [me, setMe] = useState<MeView | null>(null);
  useEffect(() => {
    api("/api/v1/me", MeView).then(setMe, () => setMe(null));
  }, []);
  return me;
}
