import gql from "graphql-tag";

export const RUNNERS = gql`
  query Runners {
    runners {
      nodes {
        id
        ...on CiRunner {
          # expect: graphql-runner-active col=11
          active
        }
      }
    }
  }
`;
