#!/bin/sh
# Instructions and mispredicted conditional branches per hold event, from
# valgrind's callgrind with branch simulation: repeatable under any machine
# load, unlike wall-clock time. Each figure is the difference between runs
# of 600,000 and 100,000 events, so setup cancels out. GC is off (GOGC=off),
# which favours the allocating heap kernel.
#
#   sh bench/callgrind.sh                 # calendar, heap and the floor (internal/holdfloor), N = 10 .. 100000 and skewed
#   KERNELS=calendar SIZES="1000" sh bench/callgrind.sh
set -eu
KERNELS=${KERNELS:-"calendar heap stripped"}
SIZES=${SIZES:-"10 100 1000 10000 100000 skew"}
cd "$(dirname "$0")/.."
bin=$(mktemp -d)/holdcg
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build -o "$bin" ./bench/holdcg
count() {
	GOGC=off GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --branch-sim=yes --callgrind-out-file=/dev/null "$bin" "$@" 2>&1 |
		sed -n 's/.*Collected : //p'
}
for k in $KERNELS; do
	for n in $SIZES; do
		if [ "$n" = skew ] && [ "$k" = stripped ]; then continue # the floor has no fallback
		elif [ "$n" = skew ]; then a=$(count "$k" 1000 100000 skew); b=$(count "$k" 1000 600000 skew)
		else a=$(count "$k" "$n" 100000); b=$(count "$k" "$n" 600000); fi
		echo "$a $b" | awk -v k="$k" -v n="$n" '{ printf "%s N=%s: %d instructions, %.2f mispredicted branches per event\n", k, n, ($6-$1)/500000, ($8-$3)/500000 }'
	done
done
