#!/usr/bin/env python3
# Does a flood of registration writes slow the publish path? A broadcast's fan-out time and the
# latency of POST /v1/notifications, quiet and while one Listen key floods PUT
# /v1/installations/{id} with new devices as fast as its clients can, on one `herald worker`
# (planner, fan-out, indexer: the indexer applies the flood in the process that fans out) and
# one `herald api` with the default rate limits.
#
#   scripts/stack run -- bench/probes/registration-flood.py [--devices 50000] [--rounds 3]
#       [--flood-clients 16] [--herald .build/release/herald]
#
# Devices register as installations (one request each: the app picks the installation id) with
# one or two category tags and an English template, through a second API process without rate
# limits so seeding does not wait. The broadcast's time is the status record's durationMs
# (publishedAt to the last task's commit, written by the worker); each phase publishes `rounds`
# broadcasts one after the other and reports their median. Standard library only.
#
# Measured on Tansu 0.6.0 (memory storage), two cores, --devices 50000:
#   CPU quiet (0.5 s, cores): herald worker 0.63, herald api 0.06, probe (flood client) 0.04, broker 0.45, redis 0.12
#   CPU during the flood (2.4 s, cores): herald worker 0.45, herald api 0.31, probe (flood client) 0.10, broker 0.80, redis 0.14
#   flood: 16 clients, one Listen key, 5.5 s: 200: 1,923 (352 writes/s accepted)
#                                   quiet      flood   ratio
#   broadcast durationMs              151        769    5.09
#   POST /v1/notifications ms         1.7       10.4    5.92
import argparse
import http.client
import json
import os
import re
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

CATEGORIES = ["World", "Politics", "Business", "Technology", "Science", "Sports"]
TEMPLATE = {"newsTemplate": {"body": '{"aps":{"alert":"$(News_English)"}}'}}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Client:
    """One keep-alive connection to the API (one per thread)."""

    def __init__(self, port, auth):
        self.port, self.auth, self.connection = port, auth, None

    def request(self, method, path, body=None):
        for attempt in range(3):
            try:
                if self.connection is None:
                    self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
                data = None if body is None else json.dumps(body).encode()
                headers = {"Authorization": self.auth, "Content-Type": "application/json"}
                self.connection.request(method, path, body=data, headers=headers)
                response = self.connection.getresponse()
                return response.status, response.read(), response.getheader("Retry-After")
            except (OSError, http.client.HTTPException):
                self.connection = None
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")


def pid_on(endpoint):
    port = endpoint.rsplit(":", 1)[-1].strip("/")
    out = subprocess.run(["ss", "-ltnpH", f"sport = :{port}"], capture_output=True, text=True).stdout
    found = re.search(r"pid=(\d+)", out)
    return int(found.group(1)) if found else None


def cpu_seconds(pid):
    """User + system CPU of `pid` so far, in seconds (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError):
        return 0.0


def installation(index, rng_tag):
    tags = [CATEGORIES[index % 6]] + ([CATEGORIES[(index // 6) % 6]] if rng_tag else [])
    return {"platform": "apns", "pushChannel": f"{index:064x}", "tags": sorted(set(tags)), "templates": TEMPLATE}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--devices", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--flood-clients", type=int, default=16)
    parser.add_argument("--seed-clients", type=int, default=8)
    parser.add_argument("--caller-rps", type=int, default=None,
                        help="HERALD_CALLER_REQUESTS_PER_SECOND of the flooded API (default: Herald's default)")
    parser.add_argument("--pin", action="store_true",
                        help="the worker, broker and Redis on CPU 0, the APIs and this flood client on CPU 1, as if the flood "
                             "came from elsewhere and the API had its own machine; both phases run pinned")
    parser.add_argument("--herald", default=".build/release/herald")
    args = parser.parse_args()
    herald = str(Path(args.herald).resolve())
    if not os.access(herald, os.X_OK):
        sys.exit(f"build first: swift build -c release --product herald ({herald} is missing)")
    if not os.environ.get("HERALD_KAFKA_BROKERS") or not os.environ.get("HERALD_REDIS_URL"):
        sys.exit("run under scripts/stack run -- bench/probes/registration-flood.py")

    signal.signal(signal.SIGTERM, lambda *_: sys.exit("stopped by SIGTERM"))
    work = Path(tempfile.mkdtemp(prefix="herald-flood-"))
    run = f"flood-{os.getpid()}"
    key = "flood-probe-" + secrets.token_hex(16)
    env = dict(os.environ)
    env.update(
        HERALD_POLICIES=f"Full:listen+send+manage:{key};Listen:listen:{key}-listen;Newsroom:send:{key}-send",
        HERALD_ID_SECRET="id-secret-of-the-registration-flood-probe",
        HERALD_TOPIC_PREFIX=f"{run}.herald.",
        HERALD_REDIS_PREFIX=run,
        HERALD_LOG_LEVEL="warning",
        HERALD_METRICS_PORT=str(free_port()),
    )
    processes = []

    def start(name, *command, **extra):
        log = open(work / f"{name}.log", "w")
        process = subprocess.Popen([herald, *command], env={**env, **extra}, cwd=work, stdout=log, stderr=subprocess.STDOUT)
        processes.append(process)
        return process

    try:
        subprocess.run([herald, "topics", "create"], env=env, cwd=work, check=True, capture_output=True)
        start("worker", "worker")
        api_port, seed_port = free_port(), free_port()
        limits = {} if args.caller_rps is None else {"HERALD_CALLER_REQUESTS_PER_SECOND": str(args.caller_rps)}
        start("api", "api", HERALD_API_PORT=str(api_port), HERALD_HUB_URI=f"http://127.0.0.1:{api_port}/",
              HERALD_METRICS_PORT=str(free_port()), **limits)
        start("api-seed", "api", HERALD_API_PORT=str(seed_port), HERALD_HUB_URI=f"http://127.0.0.1:{api_port}/",
              HERALD_METRICS_PORT=str(free_port()), HERALD_CALLER_REQUESTS_PER_SECOND="0", HERALD_HUB_REQUESTS_PER_SECOND="0")
        def token(policy, policy_key):
            return subprocess.run([herald, "token", "sas", "--policy", policy, "--key", policy_key, "--resource",
                                   f"http://127.0.0.1:{api_port}/"], env=env, check=True, capture_output=True, text=True).stdout.strip()

        auth, listen, newsroom = token("Full", key), token("Listen", f"{key}-listen"), token("Newsroom", f"{key}-send")
        for port in (api_port, seed_port):
            for _ in range(600):
                try:
                    if Client(port, auth).request("GET", "/health/ready")[0] == 200:
                        break
                except OSError:
                    pass
                time.sleep(0.1)
            else:
                sys.exit(f"the API on port {port} never became ready; logs in {work}")

        # Seed.
        started = time.monotonic()
        local = threading.local()

        def put(index, port=seed_port):
            if not hasattr(local, "client") or local.client.port != port:
                local.client = Client(port, auth)
            status, body, _ = local.client.request("PUT", f"/v1/installations/dev-{index}", installation(index, index % 3 == 0))
            if status >= 300:
                raise RuntimeError(f"PUT installation dev-{index}: {status} {body[:200]!r}")

        with ThreadPoolExecutor(args.seed_clients) as pool:
            list(pool.map(put, range(args.devices), chunksize=256))
        print(f"seeded {args.devices:,} installations in {time.monotonic() - started:.1f} s")

        publisher = Client(api_port, newsroom)

        def broadcast(label):
            sent = time.monotonic()
            status, body, _ = publisher.request("POST", "/v1/notifications", {"properties": {"News_English": f"Flood probe {label}"}})
            accepted_ms = (time.monotonic() - sent) * 1000
            if status != 202:
                raise RuntimeError(f"POST /v1/notifications: {status} {body[:200]!r}")
            event = json.loads(body)["id"]
            while True:
                status, body, _ = publisher.request("GET", f"/v1/notifications/{event}")
                if status == 200:
                    record = json.loads(body)
                    if record["state"] in ("completed", "rejected", "expired"):
                        return record, accepted_ms
                time.sleep(0.02)

        # Wait until the indexer has applied every device: a broadcast reaches all of them.
        for _ in range(120):
            record, _ = broadcast("settling")
            if record["targets"]["total"] >= args.devices:
                break
            time.sleep(1)
        else:
            sys.exit(f"the index never held {args.devices:,} devices (last broadcast: {record['targets']['total']}); logs in {work}")

        watched = {"herald worker": processes[0].pid, "herald api": processes[1].pid, "probe (flood client)": os.getpid(),
                   "broker": pid_on(os.environ["HERALD_KAFKA_BROKERS"].split(",")[0]), "redis": pid_on(os.environ["HERALD_REDIS_URL"])}

        if args.pin:
            for name, pid in watched.items():
                core = "1" if name in ("herald api", "probe (flood client)") else "0"
                subprocess.run(["taskset", "-apc", core, str(pid)], check=True, capture_output=True)
            subprocess.run(["taskset", "-apc", "1", str(processes[2].pid)], check=True, capture_output=True)
            print("pinned: worker, broker, Redis on CPU 0; APIs and the flood client on CPU 1")

        def rounds(label):
            before = {name: cpu_seconds(pid) for name, pid in watched.items() if pid}
            clock = time.monotonic()
            runs = [broadcast(f"{label} {n}") for n in range(args.rounds)]
            elapsed = time.monotonic() - clock
            usage = {name: (cpu_seconds(watched[name]) - start) / elapsed for name, start in before.items()}
            print(f"CPU {label} ({elapsed:.1f} s, cores): " + ", ".join(f"{name} {cores:.2f}" for name, cores in usage.items()))
            durations = [record["timings"]["durationMs"] for record, _ in runs]
            accepted = [ms for _, ms in runs]
            delivered = {record["targets"]["total"] for record, _ in runs}
            return statistics.median(durations), statistics.median(accepted), durations, accepted, delivered

        quiet = rounds("quiet")

        stop = threading.Event()
        codes = {}
        codes_lock = threading.Lock()
        next_index = iter(range(10_000_000, 20_000_000))
        index_lock = threading.Lock()

        def flood():
            client = Client(api_port, listen)
            while not stop.is_set():
                with index_lock:
                    index = next(next_index)
                status, _, _ = client.request("PUT", f"/v1/installations/flood-{index}", installation(index, True))
                with codes_lock:
                    codes[status] = codes.get(status, 0) + 1

        flooders = [threading.Thread(target=flood, daemon=True) for _ in range(args.flood_clients)]
        flood_started = time.monotonic()
        for thread in flooders:
            thread.start()
        time.sleep(3)
        flooded = rounds("during the flood")
        stop.set()
        for thread in flooders:
            thread.join()
        flood_seconds = time.monotonic() - flood_started

        accepted_writes = sum(count for status, count in codes.items() if status < 300)
        print(f"flood: {args.flood_clients} clients, one Listen key, {flood_seconds:.1f} s: "
              + ", ".join(f"{status}: {count:,}" for status, count in sorted(codes.items()))
              + f" ({accepted_writes / flood_seconds:,.0f} writes/s accepted)")
        print(f"{'':26} {'quiet':>10} {'flood':>10} {'ratio':>7}")
        print(f"{'broadcast durationMs':26} {quiet[0]:>10.0f} {flooded[0]:>10.0f} {flooded[0] / quiet[0]:>7.2f}")
        print(f"{'POST /v1/notifications ms':26} {quiet[1]:>10.1f} {flooded[1]:>10.1f} {flooded[1] / quiet[1]:>7.2f}")
        print(f"each broadcast (ms): quiet {quiet[2]}, flood {flooded[2]}; delivered quiet {sorted(quiet[4])}, flood {sorted(flooded[4])}")
        print(f"each publish (ms): quiet {[round(x, 1) for x in quiet[3]]}, flood {[round(x, 1) for x in flooded[3]]}")
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        print(f"logs: {work}")


if __name__ == "__main__":
    main()
