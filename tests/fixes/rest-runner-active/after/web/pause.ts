const API = `${process.env.CI_SERVER_URL}/api/v4`;

export async function pause(id: number): Promise<void> {
  await fetch(`${API}/runners/${id}`, {
    method: "PUT",
    body: JSON.stringify({ paused: true }),
  });
}
