interface Changes {
  changes: { diff: string }[];
}

export class MergeRequestClient {
  constructor(
    private readonly apiBase: string,
    private readonly token: string,
    private readonly projectId: string,
    private readonly iid: string
  ) {}

  async diffs(): Promise<{ diff: string }[]> {
    const body = await this.request<Changes>(
      `/projects/${this.projectId}/merge_requests/${this.iid}/changes`
    );
    return body.changes;
  }

  private async request<T>(path: string): Promise<T> {
    const res = await fetch(`${this.apiBase}${path}`, {
      headers: { "PRIVATE-TOKEN": this.token },
    });
    return (await res.json()) as T;
  }
}
