#!/usr/bin/env bash
all=$(curl --silent \
    "$GITLAB_URL/api/v4/runners?per_page=100" \
    --header "PRIVATE-TOKEN: $ADMIN_TOKEN")

never_seen=$(echo "$all" | jq "[.[] | select(.status==\"not_connected\")]")
for id in $(echo "$never_seen" | jq ".[] | .id"); do
    curl --request DELETE --silent "$GITLAB_URL/api/v4/runners/$id" \
        --header "PRIVATE-TOKEN: $ADMIN_TOKEN"
done
