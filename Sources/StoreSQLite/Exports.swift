// What users of the store need of EventLog without importing it (the daemon imports the stores,
// not the log): the durability setting `open` takes, and the process's clocks.
@_exported import enum EventLog.Durability
@_exported import enum EventLog.SystemClock
