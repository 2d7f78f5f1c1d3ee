import { MemoryPage } from "@/components/memory/memory-view";

export default function Memory() {
  return <MemoryPage />;
}
