export { ProcessRecords, activeProcessRecords, forgetProcess, recordProcess, setProcessRecords } from "./records";
export { groupAlive, groupMembers, pidExists, terminalMembers } from "./proc";
export { killProcesses } from "./kill";
