const GITLAB = "https://gitlab.example.com";

export function login(clientId, back, challenge) {
  // ok: oauth-implicit-grant
  window.location.href = `${GITLAB}/oauth/authorize?client_id=${clientId}&redirect_uri=${back}&response_type=code&code_challenge=${challenge}&code_challenge_method=S256`;
  // ok: oauth-implicit-grant
  return fetch(`${GITLAB}/oauth/token?grant_type=authorization_code&response_type=token_id`);
}
