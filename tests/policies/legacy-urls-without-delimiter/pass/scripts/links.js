// ok: legacy-urls-without-delimiter
// see https://gitlab.example.com/acme/shop/merge_requests/3 for the history
export const url = "https://gitlab.example.com/acme/shop/-/merge_requests/3";
