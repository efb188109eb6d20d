import webbrowser

# expect: oauth-implicit-grant col=45
webbrowser.open("https://gitlab.example.com/oauth/authorize?response_type=token&client_id=abc&redirect_uri=http://localhost:8000/cb")
