export default function SettingsPage() {
  return (
    <div className="mx-auto max-w-3xl p-6" data-testid="settings-page">
      <h1 className="text-base font-semibold">Settings</h1>
      <p className="mt-2 text-muted">
        The model comes from the environment for now: set <code>OPENAI_BASE_URL</code>, <code>OPENAI_API_KEY</code> and{" "}
        <code>WORLDLINE_MODEL</code>, then restart <code>npm start</code>.
      </p>
    </div>
  );
}
