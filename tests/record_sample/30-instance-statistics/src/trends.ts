import { gql } from '@apollo/client/core';

export const PROJECT_COUNTS = gql`
  query projectCounts {
    instanceStatisticsMeasurements(identifier: PROJECTS, first: 12) {
      nodes { count recordedAt }
    }
  }
`;
