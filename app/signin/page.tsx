import { Suspense } from "react";
import { SignInForm } from "@/components/people/sign-in-form";

export const metadata = { title: "Sign in · Worldline" };

export default function SignInPage() {
  return (
    // useSearchParams (the provider's error, where to go after) needs a boundary in a static page.
    <Suspense>
      <SignInForm />
    </Suspense>
  );
}
