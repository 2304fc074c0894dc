#!/usr/bin/env bash
# check-dashboards.sh: check every Grafana dashboard query against a real
# Prometheus scraping a real lockd under pgbench load (not run in CI).
#
#   scripts/check-dashboards.sh            # about a minute of load
#   DURATION=20 scripts/check-dashboards.sh
#
# It builds lockd, starts it on free ports, installs Prometheus from Debian
# if it is missing (apt-get; needs root), scrapes lockd every second, runs
# pgbench (tpcb-like plus an advisory-lock script) for DURATION seconds,
# then evaluates every "expr" of deploy/grafana/dashboards/*.json (and the
# dashboards' template-variable queries) through Prometheus's HTTP API, with
# Grafana's variables replaced by concrete values. It fails if any query
# errors or returns no series. It also runs `promtool check metrics` on a
# scrape of /metrics, which must print nothing.
#
# Needs: go, pgbench, curl, python3; prometheus and promtool (installed if
# missing).
set -euo pipefail

cd "$(dirname "$0")/.."
root=$(pwd)
duration=${DURATION:-60}
clients=${CLIENTS:-8}

work=$(mktemp -d /tmp/lockd-check-dashboards.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	for p in "${pids[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	if [[ ${KEEP:-} == "" ]]; then
		rm -rf "$work"
	else
		echo "kept $work"
	fi
}
trap cleanup EXIT

log() { printf '== %s\n' "$*" >&2; }

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

wait_http() { # url seconds
	for _ in $(seq 1 $(($2 * 10))); do
		if curl -fsS -o /dev/null "$1" 2>/dev/null; then
			return 0
		fi
		sleep 0.1
	done
	echo "timed out waiting for $1" >&2
	return 1
}

for tool in go pgbench curl python3; do
	command -v "$tool" >/dev/null || { echo "check-dashboards: $tool is required" >&2; exit 1; }
done
if ! command -v prometheus >/dev/null || ! command -v promtool >/dev/null; then
	log "installing Prometheus from Debian"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends prometheus >/dev/null
fi

log "building lockd"
go build -o "$work/lockd" ./cmd/lockd

pgport=$(free_port)
mport=$(free_port)
promport=$(free_port)

log "starting lockd on 127.0.0.1:$pgport (metrics on :$mport)"
"$work/lockd" -D "$work/data" -p "$pgport" -c listen_addresses=127.0.0.1 \
	-c "metrics_listen_address=127.0.0.1:$mport" -c max_connections=50 \
	>"$work/lockd.log" 2>&1 &
pids+=($!)
wait_http "http://127.0.0.1:$mport/metrics" 20

cat >"$work/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: lockd
    static_configs:
      - targets: ["127.0.0.1:$mport"]
EOF
log "starting Prometheus on 127.0.0.1:$promport"
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
	--web.listen-address="127.0.0.1:$promport" >"$work/prometheus.log" 2>&1 &
pids+=($!)
wait_http "http://127.0.0.1:$promport/-/ready" 30

log "promtool check metrics"
curl -fsS "http://127.0.0.1:$mport/metrics" >"$work/scrape.txt"
promtool_out=$(promtool check metrics <"$work/scrape.txt" 2>&1) || true
if [[ -n $promtool_out ]]; then
	echo "promtool check metrics complained:" >&2
	echo "$promtool_out" >&2
	exit 1
fi

export PGHOST=127.0.0.1 PGPORT=$pgport PGUSER=postgres PGDATABASE=postgres PGCONNECT_TIMEOUT=5
log "pgbench -i -s 1"
pgbench -i -s 1 -q >"$work/pgbench-init.log" 2>&1

cat >"$work/advisory.sql" <<'EOF'
\set k random(1, 4)
BEGIN;
SELECT pg_advisory_xact_lock(:k);
SELECT abalance FROM pgbench_accounts WHERE aid = :k;
END;
EOF

log "load: $duration s of tpcb-like ($clients clients) + advisory locks (4 clients)"
pgbench -b tpcb-like -c "$clients" -j 2 -T "$duration" -P 10 >"$work/pgbench-tpcb.log" 2>&1 &
tpcb=$!
pgbench -n -f "$work/advisory.sql" -c 4 -j 1 -T "$duration" >"$work/pgbench-advisory.log" 2>&1 &
adv=$!
wait "$tpcb" || { cat "$work/pgbench-tpcb.log" >&2; exit 1; }
wait "$adv" || { cat "$work/pgbench-advisory.log" >&2; exit 1; }
grep -h '^tps' "$work/pgbench-tpcb.log" "$work/pgbench-advisory.log" >&2 || true
sleep 2 # one more scrape after the load

log "evaluating dashboard queries"
python3 - "$promport" "$root"/deploy/grafana/dashboards/*.json <<'EOF'
import json, math, sys, urllib.parse, urllib.request

port, files = sys.argv[1], sys.argv[2:]
subst = {
    "$__rate_interval": "20s", "${__rate_interval}": "20s",
    "$__interval": "5s", "${__interval}": "5s",
    "$__range": "5m", "${__range}": "5m",
}

def query(expr):
    data = urllib.parse.urlencode({"query": expr}).encode()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/query", data, timeout=30) as r:
            body = json.load(r)
    except urllib.error.HTTPError as e:
        body = json.load(e)
    if body.get("status") != "success":
        return None, body.get("error", "unknown error")
    return body["data"]["result"], None

def panels(ps):
    for p in ps:
        yield p
        yield from panels(p.get("panels", []))

failed = checked = 0
for f in files:
    d = json.load(open(f))
    name = f.rsplit("/", 1)[-1]
    items = []
    # Each variable with an "All" value ($instance, $tranche, $locktype)
    # stands for everything, as when a user leaves it on All.
    vsubst = dict(subst)
    for v in d.get("templating", {}).get("list", []):
        if "allValue" in v:
            vsubst[f"${v['name']}"] = vsubst[f"${{{v['name']}}}"] = v["allValue"]
    for v in d.get("templating", {}).get("list", []):
        q = v.get("definition", "")
        if q.startswith("label_values("):
            metric, label = q[len("label_values("):-1].rsplit(",", 1)
            items.append((f"variable ${v['name']}", metric.strip(), label.strip()))
    for p in panels(d.get("panels", [])):
        for t in p.get("targets", []):
            if "expr" in t:
                items.append((f"{p.get('title')} [{t.get('refId')}]", t["expr"], None))
    for title, expr, label in items:
        concrete = expr
        for k in sorted(vsubst, key=len, reverse=True):
            concrete = concrete.replace(k, vsubst[k])
        if "$" in concrete:
            print(f"FAIL {name}: {title}: unsubstituted variable in {concrete}")
            failed += 1
            continue
        checked += 1
        result, err = query(concrete)
        if err:
            print(f"FAIL {name}: {title}: {err}\n     {concrete}")
            failed += 1
        elif not result:
            print(f"FAIL {name}: {title}: no series\n     {concrete}")
            failed += 1
        elif label and not any(label in r["metric"] for r in result):
            print(f"FAIL {name}: {title}: no series has label {label}")
            failed += 1
        else:
            vals = [(",".join(v for k, v in sorted(r["metric"].items()) if k not in ("__name__", "instance", "job")),
                     float(r["value"][1])) for r in result if "value" in r]
            nan = sum(1 for _, v in vals if math.isnan(v))
            shown = ", ".join(f"{k}={v:.4g}" if k else f"{v:.4g}" for k, v in vals[:6]) + (" ..." if len(vals) > 6 else "")
            note = f" ({nan} NaN)" if nan else ""
            print(f"ok   {name}: {title}: {len(result)} series{note}: {shown}")
print(f"{checked} queries checked, {failed} failed")
sys.exit(1 if failed else 0)
EOF
