#!/bin/sh
# expect: secret-detection-skip-push-option col=10
git push -o secret_detection.skip_all origin HEAD:main
