export {
  ProcessRecords,
  activeProcessRecords,
  forgetProcess,
  recordProcess,
  setProcessRecords,
  type ProcessRecord,
} from "./records";
