# syntax=docker/dockerfile:1
# Herald container image: build with the Swift toolchain, run on Ubuntu 24.04, whose librdkafka
# (2.3) is newer than 2.2 (older ones cannot talk to brokers that send tagged fields).

FROM swift:6.3-noble AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      pkg-config librdkafka-dev libhiredis-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# The manifest names every target, so SwiftPM needs the sources (tests included) to load it.
COPY Package.swift ./
COPY Sources ./Sources
COPY Tests ./Tests
# The API's openapi.yaml is a SwiftPM resource: its bundle folder goes next to the binary.
RUN swift build -c release --product herald --static-swift-stdlib \
 && bin="$(swift build -c release --show-bin-path)" \
 && install -D "$bin/herald" /out/herald \
 && cp -R "$bin/herald_HeraldAPI.resources" /out/

FROM ubuntu:24.04 AS runtime
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      librdkafka1 libhiredis1.1.0 ca-certificates curl tzdata \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /nonexistent --shell /usr/sbin/nologin herald
COPY --from=build /out/ /usr/local/bin/
USER 10001:10001
# API on 8080, worker metrics and health on 9090.
EXPOSE 8080 9090
ENV HERALD_LOG_LEVEL=info
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD curl -fsS "http://127.0.0.1:${HERALD_HEALTH_PORT:-9090}/health/live" || exit 1
ENTRYPOINT ["/usr/local/bin/herald"]
CMD ["--help"]
