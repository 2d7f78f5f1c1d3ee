import { SettingsView } from "@/components/settings/settings-view";

export default function SettingsPage() {
  return <SettingsView />;
}
