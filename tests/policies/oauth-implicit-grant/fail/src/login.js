const GITLAB = "https://gitlab.example.com";

export function login(clientId, back) {
  // expect: oauth-implicit-grant col=37
  window.location.href = `${GITLAB}/oauth/authorize?client_id=${clientId}&redirect_uri=${back}&response_type=token&state=x`;
}
