#!/bin/bash
# prints: epoch tansu_rss_kb redis_rss_kb
while true; do
  t=$(pgrep -x tansu | head -1); r=$(pgrep -f 'redis-server' | head -1)
  [ -n "$t" ] && echo "$(date +%s.%N | cut -c1-14) $(awk '/VmRSS/{print $2}' /proc/$t/status 2>/dev/null) $(awk '/VmRSS/{print $2}' /proc/$r/status 2>/dev/null)"
  sleep 1
done
