import gitlab


class Fleet:
    def __init__(self, sites):
        self.clients = {}
        self.enrolment_tokens = {}
        for site in sites:
            self.enrolment_tokens[site["url"]] = site["registration_token"]
            self.clients[site["url"]] = gitlab.Gitlab(site["url"], private_token=site["admin_token"])

    def enrol_missing(self, wanted):
        for url, client in self.clients.items():
            for item in wanted:
                created = client.runners.create(
                    {
                        "description": item["name"],
                        "token": self.enrolment_tokens[url],
                        "tag_list": ",".join(item["tags"]),
                        "run_untagged": False,
                    }
                )
                item["token"] = created.token
