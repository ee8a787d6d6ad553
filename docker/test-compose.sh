#!/usr/bin/env bash
# Build the docker image and run docker/compose.yaml for real, on this machine
# only (no registry, no traffic beyond 127.0.0.1 and the containers' bridge):
#
#   1. a base image from Debian's packages (debootstrap; cached),
#   2. a wheelhouse of docker/requirements.lock (pip download; cached),
#   3. the image, installed from the wheelhouse (--no-index), revision recorded,
#   4. compose up: scheduler, two workers, runner; a small sweep (nightly.toml);
#      the store is copied out and `boardsweep verify` compares it with a local
#      run of the same spec (integers bit for bit, floats within rtol 1e-9),
#   5. the dashboard is served; a bigger sweep runs while one worker container
#      is killed (SIGKILL); the sweep completes and verifies losslessly,
#   6. everything is torn down (containers, network, volume).
#
# Needs: a running Docker engine, root (debootstrap, first run only), the
# project's venv (.venv) or BOARDSWEEP_PYTHON for the local run.
# Settings: BOARDSWEEP_DOCKER_CACHE (default ~/.cache/boardsweep-docker),
# BOARDSWEEP_COMPOSE (default `docker compose` if present, else `docker-compose`),
# DEBIAN_MIRROR (default http://deb.debian.org/debian).
# Exit status 0 when every step passed; the summary at the end lists them.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${BOARDSWEEP_DOCKER_CACHE:-$HOME/.cache/boardsweep-docker}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
BASE_IMAGE=boardsweep-base:bookworm
# Per checkout, so two checkouts can run this script on one engine at once.
TAG=$(printf %s "$ROOT" | sha256sum | cut -c1-8)
IMAGE=boardsweep:compose-test-$TAG
PROJECT=boardsweep-test-$TAG
PY=${BOARDSWEEP_PYTHON:-$ROOT/.venv/bin/python}
[ -x "$PY" ] || PY=python3

if [ -n "${BOARDSWEEP_COMPOSE:-}" ]; then
    read -r -a COMPOSE <<<"$BOARDSWEEP_COMPOSE"
elif docker compose version >/dev/null 2>&1; then
    COMPOSE=(docker compose)
else
    COMPOSE=(docker-compose)
fi

# vfs copies a whole container's files on create and remove: give compose v1
# more than its default 60 s per engine request.
export COMPOSE_HTTP_TIMEOUT=${COMPOSE_HTTP_TIMEOUT:-600} DOCKER_CLIENT_TIMEOUT=${DOCKER_CLIENT_TIMEOUT:-600}

SUMMARY=()
T_ALL=$(date +%s)
log() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*"; }
die() { log "FAIL: $*"; exit 1; }
note() { SUMMARY+=("$*"); log "$*"; }
elapsed() { echo $(( $(date +%s) - $1 ))s; }

WORK=$(mktemp -d /tmp/boardsweep-compose.XXXXXX)
chmod 755 "$WORK"
LINKED=()
cleanup() {
    local rc=$?
    set +e
    if [ -f "$WORK/env" ]; then
        log "tearing down (cleanup)"
        dc down -v --remove-orphans >"$WORK/down.log" 2>&1
    fi
    for f in "${LINKED[@]}"; do rm -f "$f"; done
    rm -rf "$WORK"
    exit $rc
}
trap cleanup EXIT

dc() { "${COMPOSE[@]}" -p "$PROJECT" -f "$ROOT/docker/compose.yaml" "$@"; }
cid() {  # container ids of a compose service, running or not
    docker ps -aq --filter "label=com.docker.compose.project=$PROJECT" \
        --filter "label=com.docker.compose.service=$1"
}
free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

docker info >/dev/null 2>&1 || die "no Docker engine reachable (docker info failed)"
log "compose: ${COMPOSE[*]} ($("${COMPOSE[@]}" version 2>/dev/null | head -1))"
log "engine: docker $(docker version -f '{{.Server.Version}}'), storage $(docker info -f '{{.Driver}}')"
mkdir -p "$CACHE"

# ---- 1. base image from Debian's packages ----------------------------------
t=$(date +%s)
if docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
    how="cached image"
else
    tarball=$CACHE/base-bookworm.tar
    if [ -f "$tarball" ]; then
        how="imported from $tarball"
    else
        command -v debootstrap >/dev/null || die "debootstrap not installed (apt-get install debootstrap)"
        [ "$(id -u)" = 0 ] || die "building the base image needs root (debootstrap)"
        rootfs=$WORK/rootfs
        log "debootstrap bookworm from $MIRROR (a few minutes, once)"
        debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates \
            bookworm "$rootfs" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 \
            || { tail -20 "$WORK/debootstrap.log"; die "debootstrap failed"; }
        rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin \
            "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/*
        tar -C "$rootfs" -c . >"$tarball.partial" && mv "$tarball.partial" "$tarball"
        rm -rf "$rootfs"
        how="debootstrap, cached in $tarball"
    fi
    docker import --change 'ENV LANG=C.UTF-8' --change 'CMD ["/bin/bash"]' \
        "$tarball" "$BASE_IMAGE" >/dev/null
fi
pyver=$(docker run --rm "$BASE_IMAGE" python3 -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')
note "1 base image $BASE_IMAGE (Python $pyver; $how): $(elapsed "$t")"

# ---- 2. wheelhouse ---------------------------------------------------------
t=$(date +%s)
arch=$(uname -m)
key=$(cat "$ROOT/docker/requirements.lock" <(echo "$arch setuptools>=68") | sha256sum | cut -c1-16)
wheels=$CACHE/wheelhouse-$key
if [ -f "$wheels/.complete" ]; then
    how="cached"
else
    rm -rf "$wheels.partial"
    platforms=()
    for v in 2_17 2_27 2_28 2_31 2_34 2_35 2_36; do platforms+=(--platform "manylinux_${v}_$arch"); done
    "$PY" -m pip download -q -d "$wheels.partial" --only-binary=:all: \
        --python-version 3.11 --implementation cp --abi cp311 "${platforms[@]}" \
        --platform "manylinux2014_$arch" \
        -r "$ROOT/docker/requirements.lock" "setuptools>=68" 2>&1 | grep -v '^WARNING: Location' || true
    ls "$wheels.partial"/*.whl >/dev/null 2>&1 || die "pip download produced no wheels"
    touch "$wheels.partial/.complete" && rm -rf "$wheels" && mv "$wheels.partial" "$wheels"
    how="downloaded"
fi
note "2 wheelhouse $(ls "$wheels"/*.whl | wc -l) wheels, $(du -sh "$wheels" | cut -f1) ($how): $(elapsed "$t")"

# ---- 3. the image ----------------------------------------------------------
t=$(date +%s)
REV=$(git -C "$ROOT" describe --always --dirty --abbrev=40 2>/dev/null || echo unknown)
for w in "$wheels"/*.whl; do  # into the build context, removed again on exit
    dest=$ROOT/docker/wheelhouse/$(basename "$w")
    [ -e "$dest" ] && continue
    ln "$w" "$dest" 2>/dev/null || cp "$w" "$dest"
    LINKED+=("$dest")
done
docker build -f "$ROOT/docker/Dockerfile" -t "$IMAGE" \
    --build-arg "BASE_IMAGE=$BASE_IMAGE" --build-arg "BOARDSWEEP_REVISION=$REV" \
    "$ROOT" >"$WORK/build.log" 2>&1 || { tail -30 "$WORK/build.log"; die "docker build failed"; }
for f in "${LINKED[@]}"; do rm -f "$f"; done
LINKED=()
sed 's/\x1b\[[0-9;]*m//g' "$WORK/build.log" | grep -o 'numba cache warmed.*' | sed 's/^/    /' || true
size=$(docker image inspect -f '{{.Size}}' "$IMAGE" | awk '{printf "%.0f MB", $1/1e6}')
read -r uid pid1 image_rev < <(docker run --rm "$IMAGE" sh -c \
    'echo $(id -u) $(tr "\0" " " </proc/1/cmdline | cut -d" " -f1) $(python -c "from boardsweep.pipeline.store import source_revision as r; print(r())")')
[ "$uid" != 0 ] || die "the image runs as root"
[ "$(basename "$pid1")" = dumb-init ] || die "PID 1 is $pid1, not dumb-init"
[ "$image_rev" = "$REV" ] || die "image records revision $image_rev, expected $REV"
note "3 image $IMAGE, $size, uid $uid, PID 1 $(basename "$pid1"), revision $REV: $(elapsed "$t")"

# ---- 4. compose up: a small sweep, verified against a local run ------------
mkdir -p "$WORK/sweeps" "$WORK/out"
cp "$ROOT/sweeps/nightly.toml" "$WORK/sweeps/"
cat >"$WORK/sweeps/killtest.toml" <<'EOF'
# docker/test-compose.sh: long enough (48 tasks) to kill a worker mid-sweep.
name = "killtest"
game = "monopoly"
seed = 1515
[params]
chance_deck = "standard"
[grid]
dice_sides = [4, 6, 8]
deck_policy = ["independent", "shuffled_cycle"]
jail_strategy = ["short", "long"]
[run]
replicates = 4
games = 16
players = 1
turns = 150000
[checkpoints]
count = 8
[tasks]
replicates_per_task = 1
EOF
chmod -R a+rX "$WORK/sweeps"
SCHED_PORT=$(free_port)
DASH_PORT=$(free_port)
export BOARDSWEEP_IMAGE=$IMAGE BOARDSWEEP_SWEEPS=$WORK/sweeps BOARDSWEEP_REVISION=$REV \
    BOARDSWEEP_BASE_IMAGE=$BASE_IMAGE BOARDSWEEP_SCHEDULER_PORT=$SCHED_PORT \
    BOARDSWEEP_DASHBOARD_PORT=$DASH_PORT SWEEP=nightly
env | grep -E '^(BOARDSWEEP_|SWEEP=)' >"$WORK/env"

copy_store() {  # copy_store NAME: /results/NAME.zarr out of the volume
    rm -rf "$WORK/out/$1.zarr"
    docker cp "$(cid scheduler | head -1):/results/$1.zarr" "$WORK/out/$1.zarr"
}
verify() {  # verify NAME: local re-run of the spec compared with the copied store
    "$PY" -m boardsweep verify "$WORK/sweeps/$1.toml" --against "$WORK/out/$1.zarr" --workers 2 \
        >"$WORK/verify-$1.log" 2>&1 || { cat "$WORK/verify-$1.log"; die "verify $1 failed"; }
    grep -o 'verify: OK.*' "$WORK/verify-$1.log" | tail -1
}
store_attr() { "$PY" -c 'import sys, zarr; print(zarr.open_group(sys.argv[1], mode="r").attrs[sys.argv[2]])' "$@"; }

t=$(date +%s)
log "compose up --exit-code-from runner (SWEEP=nightly)"
dc up --no-build --no-color --exit-code-from runner >"$WORK/up.log" 2>&1 \
    || { tail -40 "$WORK/up.log"; die "compose up: the runner failed"; }
workers=$(cid worker | wc -l)
[ "$workers" = 2 ] || die "compose started $workers worker containers, expected 2"
grep -E 'runner.*\| .*(tasks|done|stored)' "$WORK/up.log" | tail -3 | sed 's/^/    /' || true
note "4a compose up (scheduler, $workers workers, runner), sweep nightly: $(elapsed "$t")"

t=$(date +%s)
copy_store nightly
store_rev=$(store_attr "$WORK/out/nightly.zarr" git_revision)
[ "$store_rev" = "$REV" ] || die "the store records revision $store_rev, expected $REV"
ok=$(verify nightly)
note "4b verify nightly against a local run: $ok; store revision $store_rev: $(elapsed "$t")"

# ---- 5. dashboard; kill a worker mid-sweep ----------------------------------
t=$(date +%s)
dc up -d --no-build scheduler worker >"$WORK/up2.log" 2>&1 || { cat "$WORK/up2.log"; die "compose up -d failed"; }
SCHED=$(cid scheduler | head -1)
docker exec "$SCHED" python -c 'from distributed import Client
with Client("tcp://127.0.0.1:8786", timeout=60) as c:
    c.wait_for_workers(2, timeout=120)' || die "two workers did not join the scheduler"
code=$(curl -s -o "$WORK/status.html" -w '%{http_code}' "http://127.0.0.1:$DASH_PORT/status")
[ "$code" = 200 ] && grep -qi bokeh "$WORK/status.html" \
    || die "dashboard http://127.0.0.1:$DASH_PORT/status answered $code without a bokeh page"
note "5a scheduler and 2 workers up again; dashboard http://127.0.0.1:$DASH_PORT/status: HTTP $code (bokeh): $(elapsed "$t")"

t=$(date +%s)
done_count() {
    docker exec "$SCHED" python -c 'import zarr
try:
    d = zarr.open_group("/results/killtest.zarr", mode="r")["done"][...]
    print(int(d.sum()), d.size)
except Exception:
    print(0, 0)'
}
(export SWEEP=killtest; dc run --rm -T runner) >"$WORK/kill-run.log" 2>&1 &
RUNNER=$!
victim=""
while kill -0 "$RUNNER" 2>/dev/null; do
    read -r n total < <(done_count)
    if [ "$total" -gt 0 ] && [ "$n" -ge $(( total / 4 )) ]; then
        victim=$(cid worker | head -1)
        docker kill "$victim" >/dev/null
        killed_at="$n/$total replicates done"
        log "killed worker container ${victim:0:12} (SIGKILL) with $killed_at"
        break
    fi
    sleep 1
done
[ -n "$victim" ] || { cat "$WORK/kill-run.log"; die "the sweep ended before a worker could be killed"; }
rc=0; wait "$RUNNER" || rc=$?
[ "$rc" = 0 ] || { tail -30 "$WORK/kill-run.log"; die "the runner exited $rc after the worker kill"; }
state=$(docker inspect -f '{{.State.Status}} exit {{.State.ExitCode}}' "$victim")
read -r n total < <(done_count)
[ "$n" = "$total" ] || die "after the kill only $n/$total replicates are done"
lost=$(docker logs "$SCHED" 2>&1 | grep -ciE 'remove worker|lost' || true)
survivor=$(cid worker | grep -v "$victim" | head -1)
compiled=$(docker diff "$survivor" | grep -c '^A /opt/numba-cache/' || true)
grep -q 'store complete' "$WORK/kill-run.log" || die "the runner did not report a complete store"
note "5b sweep killtest with a worker killed at $killed_at (victim $state; scheduler log lines on the lost worker: $lost): runner exit 0, $n/$total done; numba cache files written by the surviving worker: $compiled: $(elapsed "$t")"

t=$(date +%s)
copy_store killtest
ok=$(verify killtest)
note "5c verify killtest against a local run: $ok: $(elapsed "$t")"

# ---- 6. teardown -----------------------------------------------------------
t=$(date +%s)
dc down -v --remove-orphans >"$WORK/down.log" 2>&1 || { cat "$WORK/down.log"; die "compose down failed"; }
rm -f "$WORK/env"
left=$(docker ps -aq --filter "label=com.docker.compose.project=$PROJECT" | wc -l)
[ "$left" = 0 ] || die "$left containers left after compose down"
note "6 compose down -v (containers, network, volume removed): $(elapsed "$t")"

echo
echo "== docker/test-compose.sh: PASSED in $(elapsed "$T_ALL") ($(uname -m), $(nproc) cores) =="
for line in "${SUMMARY[@]}"; do echo "  $line"; done
