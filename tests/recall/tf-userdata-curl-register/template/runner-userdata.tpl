mkdir -p /etc/gitlab-runner
yum install -y jq

if [[ `echo ${existing_token}` == "none" ]]
then
  new_token=$(curl --request POST -L "${coordinator_url}/api/v4/runners" \
    --form "token=${project_registration_token}" \
    --form "tag_list=${runner_tags}" \
    --form "locked=${lock_to_project}" \
    | jq -r .token)
fi
