@0xe8e43aa4df4002ab;
# Diagnostic events from any ECU: fault codes, warnings and status notes. Published when they
# happen, so the rate is irregular.

using Common = import "common.capnp";

struct DiagnosticLog {
  # One diagnostic event.

  header @0 :Common.Header;

  severity @1 :Severity;
  # How urgent the event is.

  source @2 :Text;
  # The component that raised it, e.g. "bms", "engine", "gnss".

  message @3 :Text;
  # Human-readable description, one line.

  code @4 :UInt32;
  # Source-specific fault code, 0 when the event has none. Together with `source` it identifies
  # the event kind across messages (the text may contain live values).

  enum Severity {
    # Ordered from least to most urgent; compare ordinals to filter.

    debug @0;
    # Developer detail, normally not shown.

    info @1;
    # Normal operation worth a note (mode change, calibration done).

    warning @2;
    # Degraded but working (fix lost, sensor out of range).

    error @3;
    # A function failed; the vehicle may restrict itself.

    fatal @4;
    # The source stopped working.
  }
}
