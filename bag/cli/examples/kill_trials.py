"""Usage: python3 bag/cli/examples/kill_trials.py target/debug/bag 20

kill -9 of `bag record` at random moments against a running simulator: per trial, the time
between the kill and the last recovered message (after `bag reindex`), and the largest gap
between consecutive car/imu messages (a hole would show as a gap far above 5 ms)."""
import json, os, random, signal, subprocess, sys, tempfile, time
BAG = sys.argv[1]; N = int(sys.argv[2]); PORT = 17601
random.seed(24)
sim = subprocess.Popen([BAG, "sim", "--listen", f"tcp/127.0.0.1:{PORT}", "--duration", str(N * 12 + 30)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
time.sleep(1.5)
rows = []
for trial in range(N):
    d = tempfile.mkdtemp(prefix="kill-")
    out = os.path.join(d, "b")
    rec = subprocess.Popen([BAG, "record", "-o", out, "--connect", f"tcp/127.0.0.1:{PORT}"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(random.uniform(2.0, 6.0))
    kill_ns = time.time_ns()
    rec.send_signal(signal.SIGKILL); rec.wait()
    ri = subprocess.run([BAG, "reindex", out], capture_output=True, text=True)
    cat = subprocess.run([BAG, "cat", "--json", out], capture_output=True, text=True)
    times = {}
    for line in cat.stdout.splitlines():
        m = json.loads(line); times.setdefault(m["topic"], []).append(m["log_time"])
    last = max(t[-1] for t in times.values()) if times else None
    imu = sorted(times.get("car/imu", []))
    gap = max((b - a for a, b in zip(imu, imu[1:])), default=0)
    loss = (kill_ns - last) / 1e9 if last else float("nan")
    n = sum(len(t) for t in times.values())
    rows.append((trial, n, loss, gap / 1e6, ri.returncode, cat.returncode))
    print(f"trial {trial:2d}: {n:6d} msgs, lost last {loss:.3f} s, max imu gap {gap/1e6:.1f} ms, reindex exit {ri.returncode}, cat exit {cat.returncode}", flush=True)
    subprocess.run(["rm", "-rf", d])
sim.send_signal(signal.SIGTERM); sim.wait()
losses = sorted(r[2] for r in rows)
print(f"{N} trials: worst loss {losses[-1]:.3f} s, median {losses[len(losses)//2]:.3f} s, worst imu gap {max(r[3] for r in rows):.1f} ms")
