@0xb780d10cc23c8dfa;
# State of the 48 V traction battery, published by the battery management system at 10 Hz.

using Common = import "common.capnp";

struct Battery {
  # One BMS sample of the whole pack.

  header @0 :Common.Header;

  voltageV @1 :Float32;
  # Pack terminal voltage, volts.

  currentA @2 :Float32;
  # Pack current, amperes; positive while discharging (motoring), negative while charging
  # (regenerative braking).

  stateOfChargePct @3 :Float32;
  # Remaining charge, 0 (empty) to 100 (full), as estimated by the BMS.

  cellTempsC @4 :List(Float32);
  # Temperature of each cell module in pack order, degrees Celsius. The length is the number of
  # modules fitted (12 on the current pack) and may differ between vehicles.
}
