export { SettingsService } from "./service";
