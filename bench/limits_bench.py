"""What idle streams and abusive TDS clients cost: CPU of idle tables, memory of `sim serve`.

- idle: `mssql-cdc run` of two caught-up tables on a quiet simulated database, under the
  default trigger and under processingTime=0; the CPU the process uses over 5 s once caught
  up (1.00 = one core busy), and its peak RSS.
- abuse: `mssql-cdc sim serve` while four clients send PRELOGIN messages that never end (each
  reconnecting when closed, for 10 s) and one trickles a byte at a time; its peak RSS
  before and after, and how many logins of a well-behaved client (one every 0.25 s, through
  isql and FreeTDS) were served meanwhile.

With --baseline BINARY the same runs are made with another build of mssql-cdc side by side,
and the table gives both. Prints Markdown.
"""

import argparse
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def peak_rss_mb(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def run(binary, *args):
    subprocess.run([binary, *map(str, args)], check=True, capture_output=True, timeout=300)


def idle_cpu(binary, work, trigger):
    db = work / "idle.sim"
    if not db.exists():
        run(binary, "sim", "create", "--db", db)
        run(binary, "sim", "demo-schema", "--db", db)
        run(binary, "sim", "workload", "--db", db, "--tps", 1000, "--transactions", 200, "--seed", 1)
    out = work / f"idle-{trigger.replace(' ', '').replace('=', '')}"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    pipeline = out / "pipeline.toml"
    pipeline.write_text(f"""tables = ["dbo_customers", "dbo_orders"]
[source]
backend = "sim"
simPath = "{db}"
[stream]
target = "lake/{{ci}}"
app_id = "{{ci}}"
checkpoint = "checkpoints/{{ci}}"
trigger = "{trigger}"
""")
    process = subprocess.Popen([binary, "run", "--json", "--timeout", "20", str(pipeline)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(6)  # caught up long before
    before = cpu_seconds(process.pid)
    time.sleep(5)
    used = cpu_seconds(process.pid) - before
    rss = peak_rss_mb(process.pid)
    process.kill()
    process.wait()
    return used / 5, rss


def flood(port, stop):
    body = b"x" * 4088
    while not stop.is_set():
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                for i in range(16384):  # 64 MiB, or until the server closes the connection
                    if stop.is_set():
                        break
                    s.sendall(struct.pack(">BBHHBB", 0x12, 0, 4096, 0, i % 256, 0) + body)
        except OSError:
            pass


def trickle(port, stop):
    while not stop.is_set():
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                while not stop.is_set():
                    s.sendall(b"\x12")
                    time.sleep(1)
        except OSError:
            pass


def abuse(binary, work):
    db = work / "serve.sim"
    if not db.exists():
        run(binary, "sim", "create", "--db", db)
        run(binary, "sim", "demo-schema", "--db", db)
        env = dict(os.environ, BENCH_PW="Bench-pw-1")
        subprocess.run([binary, "sim", "login", "add", "--db", str(db), "--name", "bench",
                        "--password-env", "BENCH_PW", "--db-owner"], check=True, env=env,
                       capture_output=True)
    server = subprocess.Popen([binary, "sim", "serve", "--db", str(db), "--port", "0"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    port = int(server.stdout.readline().rsplit(":", 1)[1])
    time.sleep(0.3)
    rss_before = peak_rss_mb(server.pid)
    stop = threading.Event()
    threads = [threading.Thread(target=flood, args=(port, stop)) for _ in range(4)]
    threads.append(threading.Thread(target=trickle, args=(port, stop)))
    for t in threads:
        t.start()
    served = tried = 0
    deadline = time.time() + 10
    connection = f"DRIVER=FreeTDS;SERVER=127.0.0.1;PORT={port};TDS_Version=7.4;UID=bench;PWD=Bench-pw-1"
    while time.time() < deadline:
        tried += 1
        result = subprocess.run(["isql", "-k", connection, "-b"], input="SELECT 1\n",
                                capture_output=True, text=True, timeout=30)
        served += result.returncode == 0
        time.sleep(0.25)
    stop.set()
    for t in threads:
        t.join(timeout=30)
    rss_after = peak_rss_mb(server.pid)
    server.terminate()
    server.wait(timeout=30)
    return rss_before, rss_after, served, tried


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default=str(ROOT / "build" / "mssql-cdc"))
    parser.add_argument("--baseline", help="another mssql-cdc build to measure side by side")
    parser.add_argument("--dir", default=None, help="where to work (default: a temporary directory)")
    args = parser.parse_args()
    builds = [("this build", args.binary)] + ([("baseline", args.baseline)] if args.baseline else [])
    # Absolute: the pipeline files it writes resolve relative paths against their own folder.
    work_root = Path(args.dir).resolve() if args.dir else Path(tempfile.mkdtemp())
    print("| build | measure | value |")
    print("|---|---|---:|")
    for name, binary in builds:
        work = work_root / f"limits-{name.replace(' ', '-')}"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        for trigger in ("default", "processingTime=0 ms"):
            cores, rss = idle_cpu(binary, work, trigger)
            print(f"| {name} | 2 idle tables, trigger {trigger}: CPU (cores) | {cores:.3f} |")
            print(f"| {name} | 2 idle tables, trigger {trigger}: peak RSS MB | {rss:.0f} |")
        before, after, served, tried = abuse(binary, work)
        print(f"| {name} | sim serve under 4 floods + 1 trickle: peak RSS MB before / after | {before:.0f} / {after:.0f} |")
        print(f"| {name} | sim serve under abuse: logins served of tried | {served} of {tried} |")


if __name__ == "__main__":
    main()
