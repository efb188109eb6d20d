#!/bin/sh
# expect: dependency-scanning-sbom-legacy-properties col=50
jq -r '.metadata.properties[] | select(.name == "gitlab:dependency_scanning:input_file") | .value' gl-sbom-*.cdx.json
