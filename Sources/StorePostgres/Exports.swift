// What users of the store need without importing the modules below it (the daemon imports the
// stores, not the log): EventLog's durability setting that `open` takes, and Plumbing's clocks.
@_exported import enum EventLog.Durability
@_exported import enum Plumbing.SystemClock
