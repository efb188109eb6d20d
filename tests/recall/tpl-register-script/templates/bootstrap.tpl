yum install -y gitlab-runner-${runner_version}

gitlab-runner register \
  --non-interactive \
  --url "${coordinator_url}" \
  --registration-token "${enrolment_token}" \
  --executor "docker+machine" \
  --docker-image "${job_image}" \
  --machine-machine-driver "amazonec2" \
  --machine-off-peak-timezone "${off_peak_timezone}" \
  --machine-off-peak-idle-count "${off_peak_idle}" \
  --run-untagged \
  --locked="false" \
  --tag-list "fleet,${extra_tags}"

systemctl restart gitlab-runner
