import { RoutinesPage } from "@/components/routines/routines-page";

export default function Routines() {
  return <RoutinesPage />;
}
