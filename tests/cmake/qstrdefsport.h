// qstrs specific to this port (none)
// *FORMAT-OFF*
