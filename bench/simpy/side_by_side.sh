#!/bin/sh
# Side-by-side kernel comparison at 1000 pending events: SimPy 2 hold model,
# the calendar and the container/heap callback kernel, interleaved in
# ROUNDS rounds so that machine load hits all three alike. Prints every
# measurement and, per round, the calendar's ratios to the other two; then
# the floor (internal/holdfloor: a stripped calendar, not a contender) and
# its ratio to SimPy, the most any calendar could show with these draws.
#
#   sh bench/simpy/side_by_side.sh            # 5 rounds
#   ROUNDS=3 EVENTS=300000 sh bench/simpy/side_by_side.sh
#
# Needs Go and /usr/bin/python3 with python3-simpy (see README.md).
set -eu
ROUNDS=${ROUNDS:-5}
EVENTS=${EVENTS:-300000}
GOEVENTS=${GOEVENTS:-3000000}
cd "$(dirname "$0")/../.."
bin=$(mktemp -d)/sim.test
trap 'rm -rf "$(dirname "$bin")"' EXIT
go test -c -o "$bin" ./des/sim
i=1
while [ "$i" -le "$ROUNDS" ]; do
	simpy=$(/usr/bin/python3 bench/simpy/hold.py --hold 1000 --events "$EVENTS" | sed -n 's/.*"events_per_s": \([0-9.]*\).*/\1/p')
	out=$("$bin" -test.run XXX -test.bench 'HoldSize/1000/' -test.benchtime "${GOEVENTS}x")
	cal=$(echo "$out" | awk '/1000\/calendar/ {for (k = 1; k < NF; k++) if ($(k+1) == "events/s") print $k}')
	hp=$(echo "$out" | awk '/1000\/container_heap/ {for (k = 1; k < NF; k++) if ($(k+1) == "events/s") print $k}')
	fl=$(echo "$out" | awk '/1000\/floor/ {for (k = 1; k < NF; k++) if ($(k+1) == "events/s") print $k}')
	awk -v r="$i" -v s="$simpy" -v c="$cal" -v h="$hp" -v f="$fl" 'BEGIN {
		printf "round %d: simpy %.0f events/s, calendar %.0f, container_heap %.0f: calendar/simpy %.1fx, calendar/heap %.2fx; floor %.0f, floor/simpy %.1fx\n", r, s, c, h, c / s, c / h, f, f / s }'
	i=$((i + 1))
done
