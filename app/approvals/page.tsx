export default function ApprovalsPage() {
  return (
    <div className="mx-auto max-w-4xl p-6" data-testid="approvals-page">
      <h1 className="text-base font-semibold">Approvals</h1>
      <p className="mt-2 text-muted">Requests from the agent that wait for a human appear here, across all sessions.</p>
    </div>
  );
}
