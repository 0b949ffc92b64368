@0xa7a0ac11b7668c11;
# Engine speed and the two values a driver reads beside it, published by the engine ECU at 100 Hz.

using Common = import "common.capnp";

struct EngineRpm {
  # One sample of the engine's state.

  header @0 :Common.Header;

  rpm @1 :Float32;
  # Crankshaft speed in revolutions per minute; 0 with the engine off, ~800 at idle.

  coolantTempC @2 :Float32;
  # Coolant temperature at the thermostat housing, degrees Celsius.

  throttlePositionPct @3 :Float32;
  # Throttle plate opening, 0 (closed) to 100 (wide open). This is the actuator position, which
  # the ECU may hold away from the pedal (see DriverInputs.throttlePct), e.g. under cruise control.
}
