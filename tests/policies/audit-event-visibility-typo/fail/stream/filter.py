WATCHED = {
    # expect: audit-event-visibility-typo col=6
    "user_profile_visiblity_updated",
    "user_email_address_updated",
}
