iid = 7
# expect: legacy-urls-without-delimiter col=10
BOARD = "https://gitlab.example.com/groups/acme/issues?label_name=bug"
# expect: legacy-urls-without-delimiter col=8
MR = f"https://gitlab.example.com/acme/shop/merge_requests/{iid}"
