yum install -y gitlab-runner-${runner_version}

gitlab-runner register \
  --non-interactive \
  --url "${coordinator_url}" \
  --registration-token "${enrolment_token}" \
  --executor "docker+machine" \
  --docker-image "${job_image}" \
  --machine-machine-driver "amazonec2" \
  --run-untagged \
  --locked="false" \
  --tag-list "fleet,${extra_tags}"

systemctl restart gitlab-runner
