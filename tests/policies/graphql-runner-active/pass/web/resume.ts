const MUTATION = `mutation Resume($input: RunnerUpdateInput!) { runnerUpdate(input: $input) { errors } }`;

export const resume = (id: string) =>
  fetch("/api/graphql", {
    method: "POST",
    body: JSON.stringify({ query: MUTATION, variables: { input: { id, paused: false } } }),
  });

export const lists = () =>
  fetch("/api/graphql", {
    method: "POST",
    body: JSON.stringify({
      variables: { input: [{ active: true }], other: { nested: { active: true } } },
      query: `mutation($input: RunnerUpdateInput!) { runnerUpdate(input: $input) { errors } }`,
    }),
  });
