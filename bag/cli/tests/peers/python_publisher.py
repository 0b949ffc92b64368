"""A publisher from another zenoh implementation (Python's eclipse-zenoh), for bag/tests/live_cli.rs.

Connects to the endpoint in argv[1]; advertises py/engine (EngineRpm) and py/imu_never (Imu) and
never publishes on them; publishes 200 timestamped JSON samples on py/status and 200
unstamped 16-byte samples on py/raw.
"""
import json, sys, time, zenoh
conf = zenoh.Config()
conf.insert_json5("mode", '"peer"')
conf.insert_json5("connect/endpoints", json.dumps([sys.argv[1]]))
conf.insert_json5("scouting/multicast/enabled", "false")
s = zenoh.open(conf)
tok = s.liveliness().declare_token("redline/adv/EngineRpm/py/engine")
tok2 = s.liveliness().declare_token("redline/adv/Imu/py/imu_never")
pub = s.declare_publisher("py/status", encoding=zenoh.Encoding.APPLICATION_JSON)
raw = s.declare_publisher("py/raw")
time.sleep(1.0)
for i in range(200):
    pub.put(json.dumps({"speed": i * 0.5, "ok": True}), timestamp=s.new_timestamp())
    raw.put(bytes([i % 256]) * 16)   # no timestamp
    time.sleep(0.005)
time.sleep(0.5)
s.close()
print("python published 400")
