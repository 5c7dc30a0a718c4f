#!/bin/bash
# stops the embedded broker for 40 ms in every 80 ms (a broker that answers late), while it runs
while :; do
  p=$(pgrep -f "tansu broker" | head -1)
  if [ -n "$p" ]; then kill -STOP $p 2>/dev/null; sleep 0.04; kill -CONT $p 2>/dev/null; sleep 0.04; else sleep 0.2; fi
done
