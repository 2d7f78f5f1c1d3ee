import { ApprovalsView } from "@/components/approvals/approvals-view";

export default function ApprovalsPage() {
  return <ApprovalsView />;
}
