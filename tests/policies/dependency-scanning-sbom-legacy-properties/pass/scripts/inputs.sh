#!/bin/sh
# ok: dependency-scanning-sbom-legacy-properties
jq -r '.metadata.properties[] | select(.name == "gitlab:dependency_scanning:input_file:path") | .value' gl-sbom-*.cdx.json
