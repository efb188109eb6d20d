const MUTATION = `
  mutation Pause($input: RunnerUpdateInput!) {
    # expect: graphql-runner-active col=25
    runnerUpdate(input: $input) { errors }
  }
`;

export async function pause(id: string): Promise<Response> {
  return fetch(`${process.env.CI_API_GRAPHQL_URL}`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ query: MUTATION, variables: { input: { id, active: false } } }),
  });
}

export async function inline(): Promise<Response> {
  return fetch("/api/graphql", {
    method: "POST",
    body: JSON.stringify({
      variables: { input: { active: true } },
      // expect: graphql-runner-active col=74
      query: `mutation($input: RunnerUpdateInput!) { runnerUpdate(input: $input) { errors } }`,
    }),
  });
}
