const API = `${process.env.CI_SERVER_URL}/api/v4`;

export async function pause(id: number): Promise<void> {
  await fetch(`${API}/runners/${id}`, {
    method: "PUT",
    // expect: rest-runner-active col=28
    body: JSON.stringify({ active: false }),
  });
}
