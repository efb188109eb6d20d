WATCHED = {
    # ok: audit-event-visibility-typo
    "user_profile_visibility_updated",
}
