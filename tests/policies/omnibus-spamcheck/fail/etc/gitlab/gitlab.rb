# expect: omnibus-spamcheck col=11
spamcheck['enable'] = true
# expect: omnibus-spamcheck col=11
spamcheck['monitor_mode'] = false
