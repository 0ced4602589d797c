// What users of a store need of EventLog without importing it (the daemon imports Store only):
// the durability setting and the process's clocks.
@_exported import enum EventLog.Durability
@_exported import enum EventLog.SystemClock
