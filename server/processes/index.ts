export { ProcessRecords, activeProcessRecords, forgetProcess, recordProcess, setProcessRecords } from "./records";
export { groupAlive, groupMembers, pidExists, rootsMembers, terminalMembers } from "./proc";
export { killProcesses } from "./kill";
