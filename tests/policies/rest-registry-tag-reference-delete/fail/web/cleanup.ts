const registry = `https://${process.env.CI_REGISTRY}`;

export async function dropTag(name: string, tag: string, token: string): Promise<void> {
  // expect: rest-registry-tag-reference-delete col=27
  await fetch(`${registry}/v2/${name}/tags/reference/${tag}`, {
    method: "DELETE",
    headers: { Authorization: `Bearer ${token}` },
  });
}
