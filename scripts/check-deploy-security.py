#!/usr/bin/env python3
"""Checks that the deployment files are secure by default (run by scripts/validate-deploy).

- docker-compose.yml: every published port is bound to 127.0.0.1 (no plaintext Kafka listener
  or unauthenticated Grafana/Prometheus on the LAN), Grafana allows no anonymous viewers, and the
  published demo keys are only present together with HERALD_ALLOW_DEMO_KEYS.
- deploy/base: no Secret with key material (each overlay or the operator provides it).
- deploy/overlays/prod: renders no Secret either (production keys come from a secret store).
Exits 1 naming every violation.
"""
import pathlib
import subprocess
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
problems = []

compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
for name, service in compose.get("services", {}).items():
    for port in service.get("ports", []):
        text = str(port)
        if not text.startswith("127.0.0.1:"):
            problems.append(f"docker-compose.yml: service {name} publishes {text} on every interface; bind it to 127.0.0.1")
    environment = service.get("environment") or {}
    if isinstance(environment, dict) and str(environment.get("GF_AUTH_ANONYMOUS_ENABLED", "false")).lower() == "true":
        problems.append(f"docker-compose.yml: service {name} lets anonymous users into Grafana")
anchor = compose.get("x-herald-env", {})
if anchor.get("HERALD_POLICIES") and str(anchor.get("HERALD_ALLOW_DEMO_KEYS", "")).lower() != "true":
    problems.append("docker-compose.yml: demo keys without HERALD_ALLOW_DEMO_KEYS (Herald would refuse them)")

for path in sorted((ROOT / "deploy/base").glob("*.yaml")):
    for document in yaml.safe_load_all(path.read_text()):
        if isinstance(document, dict) and document.get("kind") == "Secret":
            problems.append(f"{path.relative_to(ROOT)}: a Secret in the base; key material belongs to an overlay or a secret store")

rendered = subprocess.run(["kubectl", "kustomize", str(ROOT / "deploy/overlays/prod")], capture_output=True, text=True, check=True).stdout
for document in yaml.safe_load_all(rendered):
    if isinstance(document, dict) and document.get("kind") == "Secret":
        problems.append(f"deploy/overlays/prod renders Secret {document['metadata']['name']}; production keys come from a secret store")

for problem in problems:
    print(f"deploy security: {problem}", file=sys.stderr)
if problems:
    sys.exit(1)
print("deploy security: ports bound to 127.0.0.1, no anonymous Grafana, no key material in base or prod")
