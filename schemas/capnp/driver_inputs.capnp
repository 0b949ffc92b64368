@0xd6e992bd7a3b4836;
# What the driver (or the driving automation) commands, published by the body controller at 50 Hz.

using Common = import "common.capnp";

struct DriverInputs {
  # Pedals, steering wheel, gear selector and the active driving mode.

  header @0 :Common.Header;

  throttlePct @1 :Float32;
  # Accelerator pedal travel, 0 (released) to 100 (floored).

  brakePct @2 :Float32;
  # Brake pedal travel, 0 (released) to 100 (floored).

  steeringAngleDeg @3 :Float32;
  # Steering wheel angle, degrees; positive turns left (counter-clockwise), 0 is straight ahead.

  gear @4 :Gear;
  # Gear currently engaged.

  mode :union {
    # Who is driving. Exactly one arm is set.

    manual @5 :Void;
    # The driver controls pedals and steering.

    cruise @6 :Float32;
    # Cruise control holds this set speed, metres per second; the driver steers.

    autonomous @7 :UInt8;
    # Driving automation engaged at this SAE J3016 level (1 to 5).
  }

  enum Gear {
    # Position of the gear selector and the engaged ratio.

    park @0;
    reverse @1;
    neutral @2;
    first @3;
    second @4;
    third @5;
    fourth @6;
    fifth @7;
    sixth @8;
  }
}
